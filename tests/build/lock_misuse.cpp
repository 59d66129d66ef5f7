// What ktl/lock.h promises at compile time, checked by run.sh: built as it
// is, this file must compile with the kernel's C++ flags; with one MISUSE_*
// macro defined, it must not, and the compiler must say why.
#include "ktl/lock.h"

struct Stats {
	u32 adds;
};

u32 count(ktl::Protected<Stats> &stats, ktl::SpinLock &lock, u32 &plain) {
	{
		ktl::Guard g(lock);
		plain++;
	}
#ifdef MISUSE_PROTECTED_DATA // Protected<T> reaches its data only through with()
	stats.data_.adds++;
#endif
#ifdef MISUSE_PROTECTED_COPY // nor through a copy made without the lock
	ktl::Protected<Stats> copy = stats;
#endif
#ifdef MISUSE_GUARD_TEMPORARY // a Guard that is not kept unlocks at once
	ktl::Guard{lock};
#endif
#ifdef MISUSE_GUARD_COPY // a copied Guard would unlock twice
	ktl::Guard g(lock);
	ktl::Guard g2 = g;
#endif
	return stats.with([](Stats &s) { return ++s.adds; });
}

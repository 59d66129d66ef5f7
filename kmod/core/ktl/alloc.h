// Allocation of core objects through env.h. Objects have no virtual
// destructors, so no operator delete is ever referenced.
#pragma once
#include "../env.h"
#include "errno.h"
#include "new.h"
#include "result.h"

namespace ktl {

enum class AllocCtx { may_sleep, atomic };

// Constructs T in zeroed memory; nullptr on allocation failure.
template <typename T, typename... Args> T *create(AllocCtx ctx, Args &&...args) {
	void *mem = sroce_env_zalloc(sizeof(T), ctx == AllocCtx::atomic);
	if (!mem)
		return nullptr;
	return new (mem, place) T(forward<Args>(args)...);
}

// Memory that may sleep; charged to the calling process when it is held
// for user space (env.h sroce_env_zalloc_user).
inline void *zalloc_for(bool user, usize size) {
	return user ? sroce_env_zalloc_user(size) : sroce_env_zalloc(size, 0);
}

template <typename T> void destroy(T *obj) {
	if (!obj)
		return;
	obj->~T();
	sroce_env_free(obj);
}

} // namespace ktl

#define KTL_WARN_ON(cond)                                                      \
	({                                                                     \
		bool _w = !!(cond);                                            \
		if (__builtin_expect(_w, 0))                                   \
			sroce_env_warn(__FILE__, __LINE__, #cond);             \
		_w;                                                            \
	})

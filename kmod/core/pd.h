// Pd: a protection domain. Its number is what MRs, QPs and AHs are checked
// against on every access.
#pragma once
#include "device.h"

namespace sroce {

class Pd : public ktl::RefCounted<Pd> {
public:
	static ktl::Result<ktl::RefPtr<Pd>> create(Device &dev);
	u32 pdn() const { return pdn_; }
	Device &device() const { return *dev_; }

private:
	friend class ktl::RefCounted<Pd>;
	template <typename T, typename... A> friend T *ktl::create(ktl::AllocCtx, A &&...);
	template <typename T> friend void ktl::destroy(T *);
	Pd(Device &dev, u32 pdn) : dev_(&dev), pdn_(pdn) {}
	~Pd();

	ktl::RefPtr<Device> dev_;
	u32 pdn_;
};

} // namespace sroce

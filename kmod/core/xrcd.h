// Xrcd: an XRC domain (IBTA annex A14). It only groups: XRC SRQs and XRC
// target QPs of one domain may serve each other, and a target takes a
// message's SRQ from the packet's XRCETH only within its own domain. It is
// immutable once made, so it has no lock; the data path compares pointers.
#pragma once
#include "device.h"

namespace sroce {

class Xrcd : public ktl::RefCounted<Xrcd> {
public:
	static ktl::Result<ktl::RefPtr<Xrcd>> create(Device &dev);
	u32 xrcdn() const { return xrcdn_; }
	Device &device() const { return *dev_; }

private:
	friend class ktl::RefCounted<Xrcd>;
	template <typename T, typename... A> friend T *ktl::create(ktl::AllocCtx, A &&...);
	template <typename T> friend void ktl::destroy(T *);
	Xrcd(Device &dev, u32 xrcdn) : dev_(&dev), xrcdn_(xrcdn) {}
	~Xrcd();

	ktl::RefPtr<Device> dev_;
	u32 xrcdn_;
};

} // namespace sroce

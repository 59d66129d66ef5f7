// Linux errno values. The core returns them negated, as the kernel does; the
// numbers are Linux ABI and equal on x86_64 kernel and user space.
#pragma once

namespace ktl::err {
enum : int {
	EPERM = 1,
	ENOENT = 2,
	EIO = 5,
	EAGAIN = 11,
	ENOMEM = 12,
	EACCES = 13,
	EFAULT = 14,
	EBUSY = 16,
	EEXIST = 17,
	ENODEV = 19,
	EINVAL = 22,
	EMFILE = 24,
	ENOSPC = 28,
	ERANGE = 34,
	ENOSYS = 38,
	EOVERFLOW = 75,
	EPROTO = 71,
	EMSGSIZE = 90,
	EPROTONOSUPPORT = 93,
	EOPNOTSUPP = 95,
	ENETDOWN = 100,
	ETIMEDOUT = 110,
};
} // namespace ktl::err

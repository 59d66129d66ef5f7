// Linux errno values. The core returns them negated, as the kernel does; the
// numbers are Linux ABI and equal on x86_64 kernel and user space. Named
// without the E so that they never meet libc's errno macros in host tests:
// err::inval is EINVAL.
#pragma once

namespace ktl::err {
enum : int {
	perm = 1,
	noent = 2,
	io = 5,
	toobig = 7,
	again = 11,
	nomem = 12,
	acces = 13,
	fault = 14,
	busy = 16,
	exist = 17,
	nodev = 19,
	inval = 22,
	mfile = 24,
	nospc = 28,
	range = 34,
	nosys = 38,
	loop = 40,
	nodata = 61,
	overflow = 75,
	proto = 71,
	badmsg = 74,
	msgsize = 90,
	opnotsupp = 95,
	netdown = 100,
	timedout = 110,
};
} // namespace ktl::err

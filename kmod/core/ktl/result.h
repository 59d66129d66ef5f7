// Result<T>: a value or a negative errno, SerenityOS ErrorOr-style.
// TRY(expr) propagates the error in one line; the value is the expression's
// result. Errors are plain ints so they cross the C boundary unchanged.
#pragma once
#include "new.h"
#include "utility.h"

namespace ktl {

class Error {
public:
	// errno is positive here (EINVAL); code() returns it negated (-EINVAL).
	static constexpr Error from_errno(int e) { return Error(e); }
	constexpr int code() const { return -errno_; }
	constexpr int errno_value() const { return errno_; }
private:
	constexpr explicit Error(int e) : errno_(e) {}
	int errno_;
};

template <typename T> class [[nodiscard]] Result {
public:
	Result(const T &v) : ok_(true) { new (storage_, place) T(v); }
	Result(T &&v) : ok_(true) { new (storage_, place) T(move(v)); }
	Result(Error e) : ok_(false), err_(e.errno_value()) {}
	Result(Result &&o) : ok_(o.ok_), err_(o.err_) {
		if (ok_)
			new (storage_, place) T(move(o.value()));
	}
	Result(const Result &) = delete;
	Result &operator=(const Result &) = delete;
	~Result() {
		if (ok_)
			value().~T();
	}

	bool is_error() const { return !ok_; }
	Error error() const { return Error::from_errno(err_); }
	T &value() { return *reinterpret_cast<T *>(storage_); }
	const T &value() const { return *reinterpret_cast<const T *>(storage_); }
	T release_value() { return move(value()); }

private:
	alignas(T) unsigned char storage_[sizeof(T)];
	bool ok_;
	int err_ = 0;
};

template <> class [[nodiscard]] Result<void> {
public:
	Result() : err_(0) {}
	Result(Error e) : err_(e.errno_value()) {}
	bool is_error() const { return err_ != 0; }
	Error error() const { return Error::from_errno(err_); }
	void release_value() {}
private:
	int err_;
};

// Negative errno (C convention) to Result<void>.
inline Result<void> from_rc(int rc) {
	if (rc < 0)
		return Error::from_errno(-rc);
	return {};
}

// Result<void> to negative errno for the C API.
inline int to_rc(const Result<void> &r) { return r.is_error() ? r.error().code() : 0; }

} // namespace ktl

// Statement expression (GNU C++, also accepted by the kernel toolchain).
#define TRY(expr)                                                              \
	({                                                                     \
		auto _try_result = (expr);                                     \
		if (_try_result.is_error())                                    \
			return _try_result.error();                            \
		_try_result.release_value();                                   \
	})

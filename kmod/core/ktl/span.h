// Span<T>: a bounds-carrying view. subspan() fails instead of reading past
// the end, which is what packet parsing of untrusted input needs.
#pragma once
#include "types.h"

namespace ktl {

template <typename T> class Span {
public:
	constexpr Span() : data_(nullptr), size_(0) {}
	constexpr Span(T *data, usize size) : data_(data), size_(size) {}
	template <usize N> constexpr Span(T (&arr)[N]) : data_(arr), size_(N) {}
	// Span<u8> -> Span<const u8>, never the other way.
	template <typename U>
		requires requires(U *u, T *&t) { t = u; }
	constexpr Span(const Span<U> &o) : data_(o.data()), size_(o.size()) {}

	constexpr T *data() const { return data_; }
	constexpr usize size() const { return size_; }
	constexpr bool empty() const { return size_ == 0; }
	constexpr T *begin() const { return data_; }
	constexpr T *end() const { return data_ + size_; }
	// Callers index within size(); use at() where the index is untrusted.
	constexpr T &operator[](usize i) const { return data_[i]; }
	constexpr T *at(usize i) const { return i < size_ ? data_ + i : nullptr; }

	// False (and *out untouched) when [offset, offset+len) is not inside.
	constexpr bool subspan(usize offset, usize len, Span *out) const {
		if (offset > size_ || len > size_ - offset)
			return false;
		*out = Span(data_ + offset, len);
		return true;
	}

private:
	T *data_;
	usize size_;
};

} // namespace ktl

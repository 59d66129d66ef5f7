// The few std/<utility> pieces the core needs, written out so that nothing
// from the standard library is linked or included.
#pragma once
#include "types.h"

namespace ktl {

template <typename T> struct remove_reference { using type = T; };
template <typename T> struct remove_reference<T &> { using type = T; };
template <typename T> struct remove_reference<T &&> { using type = T; };
template <typename T> using remove_reference_t = typename remove_reference<T>::type;

template <typename T> constexpr remove_reference_t<T> &&move(T &&v) noexcept {
	return static_cast<remove_reference_t<T> &&>(v);
}
template <typename T> constexpr T &&forward(remove_reference_t<T> &v) noexcept {
	return static_cast<T &&>(v);
}
template <typename T> constexpr T &&forward(remove_reference_t<T> &&v) noexcept {
	return static_cast<T &&>(v);
}

template <typename T> constexpr const T &min(const T &a, const T &b) { return b < a ? b : a; }
template <typename T> constexpr const T &max(const T &a, const T &b) { return a < b ? b : a; }

template <typename T> constexpr void swap(T &a, T &b) {
	T t = move(a);
	a = move(b);
	b = move(t);
}

// Byte comparison without memcmp (not among the symbols the core may use).
constexpr bool mem_equal(const u8 *a, const u8 *b, usize n) {
	u8 diff = 0;
	for (usize i = 0; i < n; i++)
		diff |= u8(a[i] ^ b[i]);
	return diff == 0;
}

template <typename T, usize N> constexpr usize size(const T (&)[N]) { return N; }

// Non-copyable base for objects with identity (locks, devices, tables).
class NonCopyable {
protected:
	NonCopyable() = default;
	~NonCopyable() = default;
public:
	NonCopyable(const NonCopyable &) = delete;
	NonCopyable &operator=(const NonCopyable &) = delete;
};

} // namespace ktl

#include <catch2/catch.hpp>

#include "ktl/errno.h"
#include "ktl/result.h"

using ktl::Error;
using ktl::Result;
namespace err = ktl::err;

namespace {
int destroyed = 0;
struct Tracked {
	int v;
	explicit Tracked(int x) : v(x) {}
	Tracked(Tracked &&o) : v(o.v) { o.v = -1; }
	~Tracked() { destroyed++; }
};

Result<int> parse_positive(int x) {
	if (x < 0)
		return Error::from_errno(err::inval);
	return x * 2;
}

Result<int> add_parsed(int a, int b) {
	int pa = TRY(parse_positive(a));
	int pb = TRY(parse_positive(b));
	return pa + pb;
}

Result<void> must_be_even(int x) {
	if (x % 2)
		return Error::from_errno(err::range);
	return {};
}

Result<int> chain_void(int x) {
	TRY(must_be_even(x));
	return x;
}
} // namespace

TEST_CASE("Result carries a value or a negative errno", "[ktl][result]") {
	auto ok = parse_positive(4);
	REQUIRE_FALSE(ok.is_error());
	CHECK(ok.value() == 8);

	auto bad = parse_positive(-1);
	REQUIRE(bad.is_error());
	CHECK(bad.error().code() == -err::inval);
	CHECK(bad.error().errno_value() == err::inval);
}

TEST_CASE("TRY propagates the first error and unwraps values", "[ktl][result]") {
	CHECK(add_parsed(1, 2).value() == 6);
	auto r = add_parsed(1, -2);
	REQUIRE(r.is_error());
	CHECK(r.error().code() == -err::inval);

	CHECK(chain_void(4).value() == 4);
	CHECK(chain_void(3).error().code() == -err::range);
}

TEST_CASE("Result destroys the value it holds exactly once", "[ktl][result]") {
	destroyed = 0;
	{
		Result<Tracked> r(Tracked(7));
		CHECK(r.value().v == 7);
		Tracked t = r.release_value();
		CHECK(t.v == 7);
	}
	// The temporary, the moved-from value in r, and t.
	CHECK(destroyed == 3);

	destroyed = 0;
	{
		Result<Tracked> e(Error::from_errno(err::nomem));
		CHECK(e.is_error());
	}
	CHECK(destroyed == 0); // an error holds no value to destroy
}

TEST_CASE("from_rc and to_rc convert between C errno and Result", "[ktl][result]") {
	CHECK_FALSE(ktl::from_rc(0).is_error());
	CHECK(ktl::from_rc(-err::busy).error().code() == -err::busy);
	CHECK(ktl::to_rc(must_be_even(2)) == 0);
	CHECK(ktl::to_rc(must_be_even(1)) == -err::range);
}

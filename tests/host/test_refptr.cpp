#include <catch2/catch.hpp>

#include "env_host.h"
#include "ktl/refptr.h"

namespace {
int alive = 0;

class Obj : public ktl::RefCounted<Obj> {
public:
	explicit Obj(int v) : value(v) { alive++; }
	~Obj() { alive--; }
	int value;
};
} // namespace

TEST_CASE("make_ref returns one reference; the last unref frees", "[ktl][refptr]") {
	env_host::clear();
	long base = env_host::live_allocations();
	{
		auto r = ktl::make_ref<Obj>(ktl::AllocCtx::may_sleep, 5);
		REQUIRE_FALSE(r.is_error());
		ktl::RefPtr<Obj> a = r.release_value();
		CHECK(a->value == 5);
		CHECK(a->ref_count() == 1);
		CHECK(alive == 1);
		{
			ktl::RefPtr<Obj> b = a; // copy takes a reference
			CHECK(a->ref_count() == 2);
			ktl::RefPtr<Obj> c = ktl::move(b); // move does not
			CHECK(a->ref_count() == 2);
			CHECK_FALSE(b);
		}
		CHECK(a->ref_count() == 1);
		CHECK(alive == 1);
	}
	CHECK(alive == 0);
	CHECK(env_host::live_allocations() == base);
	CHECK(env_host::warnings() == 0);
}

TEST_CASE("leak and adopt hand a reference across the C boundary", "[ktl][refptr]") {
	env_host::clear();
	Obj *raw;
	{
		auto p = ktl::make_ref<Obj>(ktl::AllocCtx::may_sleep, 1).release_value();
		raw = p.leak();
		CHECK_FALSE(p);
	}
	CHECK(alive == 1); // the leaked reference keeps it
	{
		auto back = ktl::RefPtr<Obj>::adopt(raw);
		CHECK(back->ref_count() == 1);
	}
	CHECK(alive == 0);
}

TEST_CASE("assignment releases the old object", "[ktl][refptr]") {
	auto a = ktl::make_ref<Obj>(ktl::AllocCtx::may_sleep, 1).release_value();
	auto b = ktl::make_ref<Obj>(ktl::AllocCtx::may_sleep, 2).release_value();
	CHECK(alive == 2);
	a = b;
	CHECK(alive == 1);
	CHECK(a->value == 2);
	CHECK(b->ref_count() == 2);
	a = nullptr;
	b.reset();
	CHECK(alive == 0);
}

TEST_CASE("make_ref reports ENOMEM when allocation fails", "[ktl][refptr]") {
	env_host::clear();
	env_host::fail_nth_allocation(0);
	auto r = ktl::make_ref<Obj>(ktl::AllocCtx::may_sleep, 1);
	REQUIRE(r.is_error());
	CHECK(r.error().code() == -ktl::err::nomem);
	CHECK(alive == 0);
}

// Mr::close decides "mine is the last reference, release with may_sleep"
// in the step that drops it: a look at the count, then unref, let a
// lock-free reader's try_ref land in between and make the reader the one
// to release, in its context (softirq), as if it could sleep.
TEST_CASE("unref_if_last drops only the last reference, in one step", "[ktl][refptr]") {
	env_host::clear();
	long base = env_host::live_allocations();
	auto r = ktl::make_ref<Obj>(ktl::AllocCtx::may_sleep, 9);
	REQUIRE_FALSE(r.is_error());
	Obj *o = r.release_value().leak();
	int lasts = 0;
	o->ref(); // a reader's
	CHECK_FALSE(o->unref_if_last([&] { lasts++; }));
	CHECK(o->ref_count() == 2); // the caller keeps its own
	CHECK(lasts == 0);
	CHECK_FALSE(o->unref());    // the reader's goes
	CHECK(o->unref_if_last([&] {
		lasts++;
		CHECK(alive == 1); // runs before the destructor
	}));
	CHECK(lasts == 1);
	CHECK(alive == 0);
	CHECK(env_host::live_allocations() == base);
	CHECK(env_host::warnings() == 0);
}

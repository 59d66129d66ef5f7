#include <catch2/catch.hpp>

#include <vector>

#include "ktl/list.h"

namespace {
struct Item {
	int id;
	ktl::ListNode node;
	ktl::ListNode other; // an object can sit on two lists
};
using ItemList = ktl::List<Item, &Item::node>;
using OtherList = ktl::List<Item, &Item::other>;

std::vector<int> ids(ItemList &l) {
	std::vector<int> v;
	l.for_each([&](Item &i) { v.push_back(i.id); });
	return v;
}
} // namespace

TEST_CASE("intrusive list keeps order and finds the owner", "[ktl][list]") {
	Item a{1, {}, {}}, b{2, {}, {}}, c{3, {}, {}};
	ItemList l;
	CHECK(l.empty());
	CHECK(l.front() == nullptr);
	l.push_back(a);
	l.push_back(b);
	l.push_front(c);
	CHECK(l.size() == 3);
	CHECK(ids(l) == std::vector<int>{3, 1, 2});
	CHECK(l.front() == &c);
	CHECK(a.node.linked());
}

TEST_CASE("remove unlinks in O(1) and pop_front drains", "[ktl][list]") {
	Item a{1, {}, {}}, b{2, {}, {}}, c{3, {}, {}};
	ItemList l;
	l.push_back(a);
	l.push_back(b);
	l.push_back(c);
	ItemList::remove(b);
	CHECK_FALSE(b.node.linked());
	CHECK(ids(l) == std::vector<int>{1, 3});
	CHECK(l.pop_front() == &a);
	CHECK(l.pop_front() == &c);
	CHECK(l.pop_front() == nullptr);
	CHECK(l.empty());
}

TEST_CASE("for_each tolerates removing the current element", "[ktl][list]") {
	Item items[5];
	ItemList l;
	for (int i = 0; i < 5; i++) {
		items[i].id = i;
		l.push_back(items[i]);
	}
	l.for_each([](Item &i) {
		if (i.id % 2 == 0)
			ItemList::remove(i);
	});
	CHECK(ids(l) == std::vector<int>{1, 3});
}

TEST_CASE("one object on two lists through two nodes", "[ktl][list]") {
	Item a{1, {}, {}}, b{2, {}, {}};
	ItemList l1;
	OtherList l2;
	l1.push_back(a);
	l1.push_back(b);
	l2.push_back(b);
	CHECK(l2.front() == &b);
	ItemList::remove(b);
	CHECK(l1.size() == 1);
	CHECK(l2.front() == &b); // still on the other list
}

// Intrusive doubly linked list (kernel list_head style). The object embeds a
// ListNode; the list never allocates and never owns. Callers hold the lock
// that protects the list.
#pragma once
#include "types.h"
#include "utility.h"

namespace ktl {

struct ListNode {
	ListNode *prev = this;
	ListNode *next = this;
	bool linked() const { return next != this; }
};

// member is the ListNode field of T that links it: List<Qp, &Qp::node_>.
template <typename T, ListNode T::*member> class List : NonCopyable {
public:
	List() = default;
	~List() = default;

	bool empty() const { return head_.next == &head_; }
	usize size() const {
		usize n = 0;
		for (const ListNode *i = head_.next; i != &head_; i = i->next)
			n++;
		return n;
	}

	void push_back(T &obj) { insert_before(&head_, &(obj.*member)); }
	void push_front(T &obj) { insert_before(head_.next, &(obj.*member)); }

	static void remove(T &obj) {
		ListNode *n = &(obj.*member);
		n->prev->next = n->next;
		n->next->prev = n->prev;
		n->prev = n->next = n;
	}

	T *front() const { return empty() ? nullptr : owner(head_.next); }
	T *pop_front() {
		T *obj = front();
		if (obj)
			remove(*obj);
		return obj;
	}

	// Iteration that tolerates removal of the current element.
	template <typename Fn> void for_each(Fn fn) {
		for (ListNode *i = head_.next, *nx = i->next; i != &head_; i = nx, nx = i->next)
			fn(*owner(i));
	}

private:
	static void insert_before(ListNode *pos, ListNode *n) {
		n->prev = pos->prev;
		n->next = pos;
		pos->prev->next = n;
		pos->prev = n;
	}
	static T *owner(const ListNode *n) {
		// offsetof for a pointer-to-member, without <cstddef>: measured on
		// raw storage, never dereferencing null.
		alignas(T) static constexpr u8 probe[sizeof(T)] = {};
		const T *obj = reinterpret_cast<const T *>(probe);
		uptr off = reinterpret_cast<uptr>(&(obj->*member)) - reinterpret_cast<uptr>(obj);
		return reinterpret_cast<T *>(reinterpret_cast<uptr>(n) - off);
	}

	ListNode head_;
};

} // namespace ktl

// QpnBlock (qpn_block.h) and the child UD QPs of the consecutive-QPN form:
// numbered inside a block, receiving into a WQ of their context instead of
// an RQ (Documentation/rss.md).
#include "qpn_block.h"
#include "param.h"
#include "qp.h"
#include "wq.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;

ktl::Result<ktl::RefPtr<QpnBlock>> QpnBlock::create(Device &dev, u32 log2, const void *uctx) {
	if (log2 > max_log2)
		return Error::from_errno(err::inval);
	if (!dev.counts().qpn_blocks.try_get(param::max_qpn_blocks))
		return Error::from_errno(err::nospc);
	// User blocks leave the kernel's reserve of numbers alone, as QPs do.
	auto base = dev.qps().reserve_block(log2, uctx ? param::reserve::qp : 0);
	if (base.is_error()) {
		dev.counts().qpn_blocks.put();
		return base.error();
	}
	auto b = ktl::make_ref<QpnBlock>(ktl::AllocCtx::may_sleep, dev, base.value(), log2, uctx);
	if (b.is_error()) {
		for (u32 i = 0; i < (1u << log2); i++)
			dev.qps().release(base.value() + i);
		dev.counts().qpn_blocks.put();
	}
	return b;
}

// Every child left the QPN table before dropping its reference.
QpnBlock::~QpnBlock() {
	for (u32 i = 0; i < (1u << log2_); i++)
		dev_->qps().release(base_ + i);
	dev_->counts().qpn_blocks.put();
}

ktl::RefPtr<QpnBlock> QpnBlock::find(Device &dev, u32 base, u32 log2) {
	if (log2 > max_log2 || (base & ((1u << log2) - 1)))
		return nullptr;
	for (u32 i = 0; i < (1u << log2); i++) {
		// The QP's reference keeps its block while we take ours.
		auto qp = dev.qps().lookup(base + i);
		QpnBlock *b = qp ? qp->qpn_block() : nullptr;
		if (b && b->base_ == base && b->log2_ == log2)
			return ktl::RefPtr<QpnBlock>(b);
	}
	return nullptr;
}

ktl::Result<u32> QpnBlock::claim(u32 index, const void *uctx) {
	if (uctx != uctx_)
		return Error::from_errno(err::perm);
	if (index >= (1u << log2_))
		return Error::from_errno(err::inval);
	u64 bit = 1ull << (index % 64);
	if (claimed_[index / 64].fetch_or(bit, ktl::MemoryOrder::acq_rel) & bit)
		return Error::from_errno(err::busy);
	return base_ + index;
}

void QpnBlock::unclaim(u32 qpn) {
	u32 index = qpn - base_;
	if (KTL_WARN_ON(index >= (1u << log2_)))
		return;
	claimed_[index / 64].fetch_and(~(1ull << (index % 64)), ktl::MemoryOrder::acq_rel);
}

// A child (check_init took its shape: a user UD QP, no RQ or SRQ): its WQ
// is its context's, of the QP's PD, with the QP's receive CQ, and no other
// child's. The number is claimed last but one: only the table insert after
// it can fail, and it is undone at once.
ktl::Result<void> Qp::init_rss_child(const sroce_core_rss_child &c, const sroce_core_qp_init &in) {
	ktl::RefPtr<Wq> wq = dev_->wqs().lookup(c.wqn);
	if (!wq || wq->uctx() != in.uctx || wq->pdn() != pd_->pdn() || &wq->cq() != rcq_.get())
		return Error::from_errno(err::inval);
	ktl::RefPtr<QpnBlock> block;
	if (c.block_base == SROCE_CORE_RSS_BLOCK_NEW)
		block = TRY(QpnBlock::create(*dev_, c.block_log2, in.uctx));
	else
		block = QpnBlock::find(*dev_, c.block_base, c.block_log2);
	if (!block)
		return Error::from_errno(err::noent);
	u32 qpn = TRY(block->claim(c.index, in.uctx));
	auto bound = wq->bind_child(qpn, owner_);
	if (bound.is_error()) {
		block->unclaim(qpn);
		return bound.error();
	}
	auto placed = dev_->qps().insert_at(qpn, this);
	if (placed.is_error()) {
		wq->unbind_child(qpn);
		block->unclaim(qpn);
		return placed.error();
	}
	qpn_ = qpn;
	rwq_ = ktl::move(wq);
	block_ = ktl::move(block);
	return {};
}

// destroy(), once: out of the table, the number free for a new child, the
// WQ free for another; the block goes with the last reference (~Qp).
void Qp::detach_rss_child() {
	dev_->qps().remove(qpn_, this, false);
	rwq_->unbind_child(qpn_);
	block_->unclaim(qpn_);
}

} // namespace sroce

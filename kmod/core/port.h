// Port: the one RoCE port of a device. Its state follows the netdev (running
// with carrier means ACTIVE) and its active MTU follows the netdev MTU.
#pragma once
#include "core.h"
#include "ktl/types.h"

namespace sroce {

class Port {
public:
	void init(bool netdev_up, u32 netdev_mtu);
	// Returns the async event a change raises (none if nothing changed).
	sroce_core_port_event netdev_changed(bool netdev_up, u32 netdev_mtu);
	void query(sroce_core_port_attr *attr) const;

	static u32 mtu_for_netdev(u32 netdev_mtu);

private:
	bool up_ = false;
	u32 active_mtu_ = SROCE_MTU_NONE;
};

} // namespace sroce

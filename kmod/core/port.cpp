// The port: state and active MTU from the netdev, port queries (port.h).
#include "port.h"
#include "param.h"

namespace sroce {

u32 Port::mtu_for_netdev(u32 netdev_mtu) {
	if (netdev_mtu < param::max_header_len)
		return SROCE_MTU_NONE;
	u32 room = netdev_mtu - param::max_header_len;
	// Largest IB MTU (256 << (enum - 1)) that fits.
	for (u32 m = SROCE_MTU_4096; m >= SROCE_MTU_256; m--)
		if (room >= 256u << (m - 1))
			return m;
	return SROCE_MTU_NONE;
}

void Port::init(bool netdev_up, u32 netdev_mtu) {
	up_ = netdev_up;
	active_mtu_ = mtu_for_netdev(netdev_mtu);
}

sroce_core_port_event Port::netdev_changed(bool netdev_up, u32 netdev_mtu) {
	active_mtu_ = mtu_for_netdev(netdev_mtu);
	if (netdev_up == up_)
		return SROCE_EVENT_NONE;
	up_ = netdev_up;
	return up_ ? SROCE_EVENT_PORT_ACTIVE : SROCE_EVENT_PORT_ERR;
}

void Port::query(sroce_core_port_attr *attr) const {
	// A port without a usable MTU cannot carry traffic: report it down.
	bool active = up_ && active_mtu_ != SROCE_MTU_NONE;
	attr->state = active ? SROCE_PORT_ACTIVE : SROCE_PORT_DOWN;
	attr->phys_state = up_ ? SROCE_PHYS_LINK_UP : SROCE_PHYS_DISABLED;
	attr->max_mtu = SROCE_MTU_4096;
	attr->active_mtu = active_mtu_ == SROCE_MTU_NONE ? u32(SROCE_MTU_256) : active_mtu_;
}

} // namespace sroce

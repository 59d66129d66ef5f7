// -d DEV: the netdev under an RDMA device's port 1, found over RDMA netlink
// (NETLINK_RDMA, RDMA_NLDEV_CMD_GET / PORT_GET). The kernel reports the
// netdev only to a socket in the netdev's own namespace, so when it is not
// in ours, each named (/run/netns) and process namespace is tried, and the
// caller is left in the one that has it, ready to open the capture there.
#pragma once
#include <string>

namespace sroce_dump {

struct RdmaNetdev {
	std::string netdev;
	unsigned ifindex = 0;
	std::string netns; // the namespace entered, "" when it is ours
};

// 0, or -errno with *err set.
int resolve_rdma_netdev(const std::string &dev, RdmaNetdev *out, std::string *err);

} // namespace sroce_dump

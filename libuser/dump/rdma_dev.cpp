#include "rdma_dev.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <vector>

#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <rdma/rdma_netlink.h>

namespace sroce_dump {

namespace {

struct Query {
	const std::string *name = nullptr;
	bool found = false;
	unsigned dev_index = 0;
	bool have_ndev = false;
	std::string ndev;
	unsigned ifindex = 0;
};

int on_msg(struct nl_msg *msg, void *arg) {
	Query *q = static_cast<Query *>(arg);
	struct nlattr *tb[RDMA_NLDEV_ATTR_MAX] = {};
	if (nlmsg_parse(nlmsg_hdr(msg), 0, tb, RDMA_NLDEV_ATTR_MAX - 1, nullptr) < 0)
		return NL_SKIP;
	if (!tb[RDMA_NLDEV_ATTR_DEV_NAME] || !tb[RDMA_NLDEV_ATTR_DEV_INDEX])
		return NL_OK;
	if (*q->name != nla_get_string(tb[RDMA_NLDEV_ATTR_DEV_NAME]))
		return NL_OK;
	q->found = true;
	q->dev_index = nla_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	if (tb[RDMA_NLDEV_ATTR_NDEV_NAME] && tb[RDMA_NLDEV_ATTR_NDEV_INDEX]) {
		q->have_ndev = true;
		q->ndev = nla_get_string(tb[RDMA_NLDEV_ATTR_NDEV_NAME]);
		q->ifindex = nla_get_u32(tb[RDMA_NLDEV_ATTR_NDEV_INDEX]);
	}
	return NL_OK;
}

// One request/response exchange; 0 or a negative libnl error.
int exchange(struct nl_sock *sk, int cmd, int flags, Query *q, unsigned dev_index) {
	struct nl_msg *msg = nlmsg_alloc_simple(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd), flags);
	if (!msg)
		return -NLE_NOMEM;
	if (dev_index != ~0u) {
		nla_put_u32(msg, RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
		nla_put_u32(msg, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	}
	int rc = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	if (rc < 0)
		return rc;
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, on_msg, q);
	return nl_recvmsgs_default(sk);
}

// Looks the device up from the current namespace. 0 when found (q->have_ndev
// tells whether its netdev is visible here), -ENODEV when not, -errno.
int query_here(const std::string &dev, Query *q) {
	q->name = &dev;
	struct nl_sock *sk = nl_socket_alloc();
	if (!sk)
		return -ENOMEM;
	int rc = nl_connect(sk, NETLINK_RDMA);
	if (rc < 0) {
		nl_socket_free(sk);
		return -EPROTONOSUPPORT;
	}
	rc = exchange(sk, RDMA_NLDEV_CMD_GET, NLM_F_REQUEST | NLM_F_DUMP, q, ~0u);
	if (rc >= 0 && q->found)
		rc = exchange(sk, RDMA_NLDEV_CMD_PORT_GET, NLM_F_REQUEST, q, q->dev_index);
	nl_socket_free(sk);
	if (rc < 0)
		return -EIO;
	return q->found ? 0 : -ENODEV;
}

// Network namespace files worth trying, without duplicates of one namespace.
std::vector<std::string> namespaces() {
	std::vector<std::string> out;
	std::set<std::pair<dev_t, ino_t>> seen;
	auto consider = [&](const std::string &path) {
		struct stat st;
		if (stat(path.c_str(), &st) == 0 && seen.insert({st.st_dev, st.st_ino}).second)
			out.push_back(path);
	};
	consider("/proc/self/ns/net");
	for (const char *dir : {"/run/netns", "/var/run/netns"}) {
		if (DIR *d = opendir(dir)) {
			while (struct dirent *e = readdir(d))
				if (e->d_name[0] != '.')
					consider(std::string(dir) + "/" + e->d_name);
			closedir(d);
		}
	}
	if (DIR *d = opendir("/proc")) {
		while (struct dirent *e = readdir(d))
			if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
				consider(std::string("/proc/") + e->d_name + "/ns/net");
		closedir(d);
	}
	return out;
}

int enter(const std::string &path) {
	int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = setns(fd, CLONE_NEWNET) ? -errno : 0;
	close(fd);
	return rc;
}

} // namespace

int resolve_rdma_netdev(const std::string &dev, RdmaNetdev *out, std::string *err) {
	Query q;
	int rc = query_here(dev, &q);
	if (rc == 0 && q.have_ndev) {
		*out = {q.ndev, q.ifindex, ""};
		return 0;
	}
	if (rc == -EPROTONOSUPPORT) {
		*err = "RDMA netlink is not available";
		return rc;
	}
	bool seen_dev = rc == 0;
	int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	std::vector<std::string> nss = namespaces(); // [0] is ours
	for (size_t i = 1; i < nss.size(); i++) {
		if (enter(nss[i]) != 0)
			continue;
		Query other;
		if (query_here(dev, &other) == 0) {
			seen_dev = true;
			if (other.have_ndev) {
				*out = {other.ndev, other.ifindex, nss[i]};
				if (home >= 0)
					close(home);
				return 0;
			}
		}
	}
	if (home >= 0) { // back home; if that fails, the error below still stands
		(void)!setns(home, CLONE_NEWNET);
		close(home);
	}
	*err = seen_dev ? "RDMA device " + dev + " has no netdev in any reachable namespace"
			: "no RDMA device " + dev;
	return -ENODEV;
}

} // namespace sroce_dump

// Test hooks of the host env.h implementation.
#pragma once
#include <string>
#include <vector>

namespace env_host {
// Allocations not yet freed (leak checks in tests).
long live_allocations();
// Lets n allocations succeed, then fails one (n = 0: the next one); -1 = off.
void fail_nth_allocation(int n);
// Log lines and warnings seen since the last clear.
std::vector<std::string> &log_lines();
int warnings();
void clear();
} // namespace env_host

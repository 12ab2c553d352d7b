// Test support: a TCP port on 127.0.0.1 that nothing listens on now (bound once to get
// it, then closed), for servers a test starts or addresses nothing answers at.
#pragma once

namespace rollout::testing {

// 0 when no port could be had.
int UnusedPort();

}  // namespace rollout::testing

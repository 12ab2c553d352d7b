// Process-wide allocator policy for programs that move large batches.
#pragma once

namespace rollout {

// Keeps freed buffers of up to 1 GiB in the heap for reuse instead of unmapping them
// after each call: every batch would otherwise be written into freshly mapped pages,
// and the page faults cost more than the copies themselves (on the transport bench:
// 2x slower round trips without it). Call first thing in main().
void UseLargeBufferMallocPolicy();

}  // namespace rollout

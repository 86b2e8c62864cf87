-- What a script did, as a code: the one list of outcomes, mirrored by `ScriptOutcome` in
-- src/redis/script-outcome.ts (a unit spec keeps the two the same). Scripts return these, never words.
local OUTCOME = {
  OK = 1,               -- done as asked
  NOT_OURS = 2,         -- the caller's reservation or partition is not its own any more (token or epoch)
  NOT_FOUND = 3,        -- no such task waiting or running
  RETRIED = 4,          -- a failed attempt will run again after its backoff
  BURIED = 5,           -- moved to dead letters
  DROPPED = 6,          -- a cancel was asked while it ran: gone, not retried
  CANCELLED = 7,        -- a waiting task removed
  CANCEL_REQUESTED = 8, -- a running task flagged and its worker told
  EMPTY = 9,            -- nothing to take
  LEASE_EXPIRED = 10,   -- the owner's lease of the partition ran out
  REVOKING = 11,        -- the partition is being handed over
  GATED = 12,           -- waiting items wait for the resize gate
  KEPT = 13,            -- the partition stays with its owner
  MOVED = 14,           -- the partition moved to a new owner
  NOT_REVOKING = 15,    -- a release, but the hand-over was called off
  QUEUED = 16,          -- an ordered task appended
  DISCARDED = 17,       -- the partition is full: the new task was dropped
  DROPPED_OLDEST = 18,  -- the partition is full: the oldest task was dropped for the new one
  PARTITION_FULL = 19,  -- the partition is full and its strategy is Exception
  STALE_COUNT = 20,     -- the producer's partition count is not the partition's
  SHRINK_REFUSED = 21,  -- fewer partitions than Redis holds
  PAUSED = 22,          -- the route queue is paused: nothing starts
}

-- Puts a task back in waiting at `due`, in its submission place among tasks due at the same time.
--- @include "includes/seq-tag"

local function requeue(waitingKey, r, id, due)
  redis.call('ZADD', waitingKey, due, memberOf(r.seq, id))
end

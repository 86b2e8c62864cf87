-- Puts a task back in waiting at `due`, in its submission place among tasks due at the same time.
--- @include "includes/waiting-set"

local function requeue(waitingKey, r, id, due)
  wsAdd(waitingKey, due, memberOf(r.seq, id), r.seq)
end

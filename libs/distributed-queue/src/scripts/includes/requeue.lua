-- Puts a task back in waiting at `due`, in its submission place among tasks due at the same time (a task
-- with a priority waits by its due time too, and is promoted again when due: see priority.lua).
--- @include "includes/priority"
--- @include "includes/groups"

local function requeue(waitingKey, r, id, due)
  wsAdd(waitingKey, due, memberOf(r.seq, id), r.seq)
  priorityCount(waitingKey, r.priority or 0, 1)
  local g = groupOf(waitingKey, id)
  if g then groupBacklog(waitingKey, g, 1) end
end

--[[
  Removes up to `batch` waiting tasks from the head of a partition's list. What is in flight (the owner's
  batch) is not waiting and is never touched. The caller repeats the call until it removes fewer than
  `batch`, so no single call holds Redis for long.
  KEYS[1] list
  ARGV[1] batch
  Returns: the number of tasks removed
]]
local n = math.min(redis.call('LLEN', KEYS[1]), tonumber(ARGV[1]))
if n > 0 then redis.call('LTRIM', KEYS[1], n, -1) end
return n

--[[
  Deletes dead letters of a partition that died `age` ms ago or earlier (Redis clock; age 0: all). The list is oldest
  first, so they are a prefix of it: at most `batch` are read, and the ones before the first younger letter
  are trimmed. A letter whose death time cannot be read counts as old. The caller repeats the call until it
  deletes fewer than `batch`.
  KEYS[1] dead
  ARGV[1] age ms  ARGV[2] batch
  Returns: the number of dead letters deleted
]]
--- @include "includes/now-ms"

local cutoff = nowMs() - tonumber(ARGV[1])
local letters = redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
local n = 0
for _, letter in ipairs(letters) do
  local died = tonumber(string.match(letter, '"diedAt":(%d+)'))
  if died and died > cutoff then break end
  n = n + 1
end
if n > 0 then redis.call('LTRIM', KEYS[1], n, -1) end
return n

-- Splits ARGV[from..] pairs of id, token into the reservations still ours (in active, same token) and the
-- others (and the tokens of ours, and their results). The token a worker holds is the reservation string
-- itself, compared as it is; an ack's token may carry the task's result after a newline (see results.lua).
-- The results of ours: text, or false for none.
local function checkReservations(activeKey, runningKey, from)
  local ids, n = {}, 0
  for i = from, #ARGV, 2 do
    n = n + 1
    ids[n] = ARGV[i]
  end
  local ours, others, oursTokens, oursResults = {}, {}, {}, {}
  if n == 0 then return ours, others, oursTokens, oursResults end
  local scores = redis.call('ZMSCORE', activeKey, unpack(ids))
  local leases = redis.call('HMGET', runningKey, unpack(ids))
  -- NOTE: hot path: counters, not #t (a search on every append)
  local no, nx = 0, 0
  for i = 1, n do
    local token, result = ARGV[from + 2 * i - 1], false
    local nl = string.find(token, '\n', 1, true)
    if nl then token, result = string.sub(token, 1, nl - 1), string.sub(token, nl + 1) end
    if scores[i] and leases[i] == token then
      no = no + 1
      ours[no], oursTokens[no], oursResults[no] = ids[i], token, result
    else
      nx = nx + 1
      others[nx] = ids[i]
    end
  end
  return ours, others, oursTokens, oursResults
end

-- Splits ARGV[from..] pairs of id, token into the reservations still ours (in active, same token) and the
-- others (and the tokens of ours). The token a worker holds is the reservation string itself, compared as it is.
local function checkReservations(activeKey, runningKey, from)
  local ids, n = {}, 0
  for i = from, #ARGV, 2 do
    n = n + 1
    ids[n] = ARGV[i]
  end
  local ours, others, oursTokens = {}, {}, {}
  if n == 0 then return ours, others, oursTokens end
  local scores = redis.call('ZMSCORE', activeKey, unpack(ids))
  local leases = redis.call('HMGET', runningKey, unpack(ids))
  -- NOTE: hot path: counters, not #t (a search on every append)
  local no, nx = 0, 0
  for i = 1, n do
    local token = ARGV[from + 2 * i - 1]
    if scores[i] and leases[i] == token then
      no = no + 1
      ours[no], oursTokens[no] = ids[i], token
    else
      nx = nx + 1
      others[nx] = ids[i]
    end
  end
  return ours, others, oursTokens
end

-- Splits ARGV[from..] pairs of id, token into the reservations still ours (in active, same token) and the
-- others (and the tokens of ours). The token a worker holds is the reservation string itself, compared as it is.
local function checkReservations(activeKey, runningKey, from)
  local ids, tokens = {}, {}
  for i = from, #ARGV, 2 do
    ids[#ids + 1] = ARGV[i]
    tokens[#tokens + 1] = ARGV[i + 1]
  end
  local ours, others, oursTokens = {}, {}, {}
  if #ids == 0 then return ours, others, oursTokens end
  local scores = redis.call('ZMSCORE', activeKey, unpack(ids))
  local leases = redis.call('HMGET', runningKey, unpack(ids))
  for i = 1, #ids do
    if scores[i] and leases[i] == tokens[i] then
      ours[#ours + 1] = ids[i]
      oursTokens[#oursTokens + 1] = tokens[i]
    else
      others[#others + 1] = ids[i]
    end
  end
  return ours, others, oursTokens
end

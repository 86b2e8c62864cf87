-- Redis's clock in ms: the only clock scripts use (never a machine's).
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

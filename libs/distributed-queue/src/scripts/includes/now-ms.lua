-- Redis's clock in ms: the only clock scripts use (never a machine's).
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Redis's clock in ms, and the same instant in microseconds as text (a reservation's stamp: unique per call, as no
-- two script calls run within the same microsecond).
local function nowMsAndStamp()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), t[1] .. string.rep('0', 6 - #t[2]) .. t[2]
end

-- A reservation: "<token>:<attempt>" -> token, attempt (nil when absent or unreadable).
local function parseLease(v)
  if type(v) ~= 'string' then return nil end
  local t, a = string.match(v, '^(%d+):(%d+)$')
  if not t then return nil end
  return tonumber(t), tonumber(a)
end

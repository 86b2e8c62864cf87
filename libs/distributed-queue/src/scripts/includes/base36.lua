-- Base-36 text of a positive integer: short generated task ids.
local function base36(n)
  local digits, out = '0123456789abcdefghijklmnopqrstuvwxyz', ''
  repeat
    local d = n % 36
    out = string.sub(digits, d + 1, d + 1) .. out
    n = math.floor(n / 36)
  until n == 0
  return out
end

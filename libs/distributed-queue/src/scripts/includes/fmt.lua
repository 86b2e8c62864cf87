-- An integer as text without exponent (Lua numbers are doubles).
local function fmt(n)
  return string.format('%.0f', n)
end

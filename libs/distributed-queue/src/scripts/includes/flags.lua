-- Record flags: one letter each.
local function hasFlag(r, f)
  return string.find(r.flags, f, 1, true) ~= nil
end

local function withFlag(r, f)
  if not hasFlag(r, f) then r.flags = r.flags .. f end
end

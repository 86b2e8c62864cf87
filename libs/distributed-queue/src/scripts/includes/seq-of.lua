-- The seq of a stored route item "<seq>:...".
local function seqOf(item)
  return tonumber(string.match(item, '^(%d+):'))
end

-- A task's submission sequence as sortable text: one letter for the number of hex digits ('A' + n, so 'A'
-- to 'N'), then the lower-case hex digits. Tags compare as bytes in the same order as the numbers, so
-- members "<tag><id>" of the waiting set order tasks with equal due times by submission (FIFO), whatever
-- their ids. NOTE: hex because string.format is C: submit makes one per task.

local function seqTag(seq)
  local digits = string.format('%x', seq)
  return string.char(64 + #digits) .. digits, digits
end

-- seq and the index of the first character after the tag; nil when `s` does not begin with a tag (at `from`,
-- default 1).
local function splitSeqTag(s, from)
  from = from or 1
  local n = (string.byte(s, from) or 0) - 64
  if n < 1 or n > 14 then return nil end
  local seq = tonumber(string.sub(s, from + 1, from + n), 16)
  if seq == nil then return nil end
  return seq, from + 1 + n
end

-- The waiting-set member of a task.
local function memberOf(seq, id)
  return seqTag(seq) .. id
end

-- The task id of a waiting-set member (a member without a tag, written by hand, is taken as an id).
-- NOTE: on the hot path: the tag's first letter gives its length, nothing else is parsed.
local function idOfMember(member)
  local n = string.byte(member, 1) - 64
  if n < 1 or n > 14 then return member end
  return string.sub(member, n + 2)
end

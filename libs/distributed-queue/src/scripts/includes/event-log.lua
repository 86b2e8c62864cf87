-- Appends one lifecycle event entry to a capped stream (maxLen <= 0: streams are off, nothing written).
-- An entry is a batch: e = event name, ids = JSON array of task ids, a = JSON array of their attempts, and
-- for failures err = JSON array of {name, message} (and stack when the failure has one); ordered tasks add t (types) and k (keys) arrays.
-- Fields come as a flat list of name, value pairs after e. Completions (the hot path) are written only while
-- the stream's followed flag exists (an instance whose fleet listeners follow the stream keeps it set) or its
-- recorded flag does (a history writer keeps that one set, and not the followed flag: the writer trims what
-- it copied unless a real follower may still have to read it).
local function logEvent(stream, maxLen, event, fields)
  if maxLen <= 0 then return end
  redis.call('XADD', stream, 'MAXLEN', '~', maxLen, '*', 'e', event, unpack(fields))
end

-- Waiters (TaskSubmitService.submitAndWait and waitFor; see delay/task-waiters.ts) hear of a task's end at
-- once: while any instance waits on a type, STRING '<its event stream>:aw' exists (a TTL its waiters
-- refresh) and holds their channel, and the scripts that end tasks (completed, dead, cancelled) publish
-- there what they would log, as a stream entry's fields: `[event, [field, value, ...]]` (see stream-entry.ts).
-- Nobody waiting: one GET of a missing key per call that ends tasks.
--- @undeclared-keys

-- The waiters' channel of the type whose event stream is `stream`, or false.
local function waitersChannel(stream)
  return redis.call('GET', stream .. ':aw')
end

-- Tells the waiters (when `channel` is one) that tasks ended: `fields` as given to logEvent.
local function tellWaiters(channel, event, fields)
  if channel then redis.call('PUBLISH', channel, cjson.encode({ event, fields })) end
end

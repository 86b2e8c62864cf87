-- Wake the workers when the earliest due time moved earlier and nothing was ready before:
-- when something was ready already, workers are busy with it and fetch again as slots free.
local function wakeIfEarlier(channel, before, due, now)
  if before == nil or (due < before and before > now) then
    local delay = due - now
    if delay < 0 then delay = 0 end
    redis.call('PUBLISH', channel, 'w:' .. string.format('%.0f', delay))
  end
end

"""The Lua script of apps/streams/services.py: one call writes an event's messages to every
stream someone watches, so the event path pays one Redis round trip whatever it told."""

# KEYS: stream, watch, stream, watch ... (one tenant's: they share a hash tag)
# ARGV: retention in ms, then per pair of KEYS a count n and n (type, data) pairs; n = -1 on a
# board's stream: publish that the board changed (its top N is read by whoever serves it).
# Returns, per pair, 1 when it is watched.
PUBLISH = """
local retention = tonumber(ARGV[1])
local now = redis.call('TIME')
local minid = tostring(tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) - retention)
local watched = {}
local a = 2
for k = 1, #KEYS, 2 do
  local n = tonumber(ARGV[a])
  a = a + 1
  local on = redis.call('EXISTS', KEYS[k + 1]) == 1
  watched[#watched + 1] = on and 1 or 0
  if n < 0 then
    if on then redis.call('PUBLISH', KEYS[k], 'changed') end
  else
    if on then
      for i = 1, n do
        local t, d = ARGV[a], ARGV[a + 1]
        local id = redis.call('XADD', KEYS[k], 'MINID', '~', minid, '*', 't', t, 'd', d)
        redis.call('PUBLISH', KEYS[k], id .. ' ' .. t .. ' ' .. d)
        a = a + 2
      end
      if n > 0 then redis.call('PEXPIRE', KEYS[k], retention) end
    else
      a = a + 2 * n
    end
  end
end
return watched
"""

-- Richards benchmark (simplified port, OOP with metatables)
local IDLE, WORKER, HANDLER_A, HANDLER_B, DEVICE_A, DEVICE_B = 1, 2, 3, 4, 5, 6
local KIND_DEVICE, KIND_WORK = 0, 1
local COUNT = 200

local Packet = {}; Packet.__index = Packet
function Packet.new(link, id, kind)
  return setmetatable({link = link, id = id, kind = kind, a1 = 0, a2 = {0,0,0,0}}, Packet)
end
function Packet:addTo(queue)
  self.link = nil
  if queue == nil then return self end
  local next = queue
  while next.link do next = next.link end
  next.link = self
  return queue
end

local TCB = {}; TCB.__index = TCB
local Scheduler = {}; Scheduler.__index = Scheduler

function Scheduler.new()
  return setmetatable({queueCount = 0, holdCount = 0, blocks = {}, list = nil, currentTcb = nil, currentId = nil}, Scheduler)
end
function Scheduler:addTask(id, priority, queue, task)
  self.currentTcb = TCB.new(self.list, id, priority, queue, task)
  self.list = self.currentTcb
  self.blocks[id] = self.currentTcb
end
function Scheduler:addRunningTask(id, priority, queue, task)
  self:addTask(id, priority, queue, task)
  self.currentTcb:setRunning()
end
function Scheduler:schedule()
  self.currentTcb = self.list
  while self.currentTcb do
    if self.currentTcb:isHeldOrSuspended() then
      self.currentTcb = self.currentTcb.link
    else
      self.currentId = self.currentTcb.id
      self.currentTcb = self.currentTcb:run()
    end
  end
end
function Scheduler:release(id)
  local tcb = self.blocks[id]
  if not tcb then return tcb end
  tcb:markAsNotHeld()
  if tcb.priority > self.currentTcb.priority then return tcb end
  return self.currentTcb
end
function Scheduler:holdCurrent()
  self.holdCount = self.holdCount + 1
  self.currentTcb:markAsHeld()
  return self.currentTcb.link
end
function Scheduler:suspendCurrent()
  self.currentTcb:markAsSuspended()
  return self.currentTcb
end
function Scheduler:queue(packet)
  local t = self.blocks[packet.id]
  if not t then return t end
  self.queueCount = self.queueCount + 1
  packet.link = nil
  packet.id = self.currentId
  return t:checkPriorityAdd(self.currentTcb, packet)
end

local RUNNING, RUNNABLE, SUSPENDED, HELD = 0, 1, 2, 4
local SUSPENDED_RUNNABLE = SUSPENDED + RUNNABLE
function TCB.new(link, id, priority, queue, task)
  local t = setmetatable({link = link, id = id, priority = priority, queue = queue, task = task}, TCB)
  t.state = queue and SUSPENDED_RUNNABLE or SUSPENDED
  return t
end
function TCB:setRunning() self.state = RUNNING end
function TCB:markAsNotHeld() self.state = self.state % HELD end
function TCB:markAsHeld() self.state = self.state - self.state % HELD + HELD + self.state % HELD end
function TCB:isHeldOrSuspended() return self.state >= HELD or self.state == SUSPENDED end
function TCB:markAsSuspended() self.state = self.state - self.state % 4 + SUSPENDED + (self.state % 2) end
function TCB:markAsRunnable() if self.state % 2 == 0 then self.state = self.state + RUNNABLE end end
function TCB:run()
  local packet
  if self.state == SUSPENDED_RUNNABLE then
    packet = self.queue
    self.queue = packet.link
    self.state = self.queue and RUNNABLE or RUNNING
  end
  return self.task:run(packet)
end
function TCB:checkPriorityAdd(task, packet)
  if self.queue == nil then
    self.queue = packet
    self:markAsRunnable()
    if self.priority > task.priority then return self end
  else
    self.queue = packet:addTo(self.queue)
  end
  return task
end

local IdleTask = {}; IdleTask.__index = IdleTask
function IdleTask.new(s, v1, count) return setmetatable({s = s, v1 = v1, count = count}, IdleTask) end
function IdleTask:run(packet)
  self.count = self.count - 1
  if self.count == 0 then return self.s:holdCurrent() end
  if self.v1 % 2 == 0 then
    self.v1 = self.v1 / 2
    return self.s:release(DEVICE_A)
  else
    self.v1 = (self.v1 - 1) / 2 + 0xD008 % 0x10000
    self.v1 = self.v1 % 0x10000
    return self.s:release(DEVICE_B)
  end
end
local DeviceTask = {}; DeviceTask.__index = DeviceTask
function DeviceTask.new(s) return setmetatable({s = s, v1 = nil}, DeviceTask) end
function DeviceTask:run(packet)
  if packet == nil then
    if self.v1 == nil then return self.s:suspendCurrent() end
    local v = self.v1
    self.v1 = nil
    return self.s:queue(v)
  else
    self.v1 = packet
    return self.s:holdCurrent()
  end
end
local WorkerTask = {}; WorkerTask.__index = WorkerTask
function WorkerTask.new(s, v1, v2) return setmetatable({s = s, v1 = v1, v2 = v2}, WorkerTask) end
function WorkerTask:run(packet)
  if packet == nil then return self.s:suspendCurrent() end
  if self.v1 == HANDLER_A then self.v1 = HANDLER_B else self.v1 = HANDLER_A end
  packet.id = self.v1
  packet.a1 = 0
  for i = 1, 4 do
    self.v2 = self.v2 + 1
    if self.v2 > 26 then self.v2 = 1 end
    packet.a2[i] = self.v2
  end
  return self.s:queue(packet)
end
local HandlerTask = {}; HandlerTask.__index = HandlerTask
function HandlerTask.new(s) return setmetatable({s = s, v1 = nil, v2 = nil}, HandlerTask) end
function HandlerTask:run(packet)
  if packet then
    if packet.kind == KIND_WORK then self.v1 = packet:addTo(self.v1)
    else self.v2 = packet:addTo(self.v2) end
  end
  if self.v1 then
    local count = self.v1.a1
    local v
    if count < 4 then
      if self.v2 then
        v = self.v2
        self.v2 = self.v2.link
        v.a1 = self.v1.a2[count + 1]
        self.v1.a1 = count + 1
        return self.s:queue(v)
      end
    else
      v = self.v1
      self.v1 = self.v1.link
      return self.s:queue(v)
    end
  end
  return self.s:suspendCurrent()
end

local s = Scheduler.new()
s:addRunningTask(IDLE, 0, nil, IdleTask.new(s, 1, COUNT))
local q = Packet.new(nil, WORKER, KIND_WORK)
q = Packet.new(q, WORKER, KIND_WORK)
s:addTask(WORKER, 1000, q, WorkerTask.new(s, HANDLER_A, 0))
q = Packet.new(nil, DEVICE_A, KIND_DEVICE)
q = Packet.new(q, DEVICE_A, KIND_DEVICE)
q = Packet.new(q, DEVICE_A, KIND_DEVICE)
s:addTask(HANDLER_A, 2000, q, HandlerTask.new(s))
q = Packet.new(nil, DEVICE_B, KIND_DEVICE)
q = Packet.new(q, DEVICE_B, KIND_DEVICE)
q = Packet.new(q, DEVICE_B, KIND_DEVICE)
s:addTask(HANDLER_B, 3000, q, HandlerTask.new(s))
s:addTask(DEVICE_A, 4000, nil, DeviceTask.new(s))
s:addTask(DEVICE_B, 5000, nil, DeviceTask.new(s))
s:schedule()
print("queueCount", s.queueCount, "holdCount", s.holdCount)

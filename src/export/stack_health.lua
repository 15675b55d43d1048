-- The health of a Pulumi Kubernetes Operator Stack, from its kstatus conditions.
-- Until the operator has seen the Stack's latest spec, its conditions describe an older one.
local status = obj.status
if status == nil or status.observedGeneration ~= obj.metadata.generation then
  return {status = "Progressing", message = "waiting for the operator to see this spec"}
end
local holds = {}
for _, condition in ipairs(status.conditions or {}) do
  if condition.status == "True" then
    holds[condition.type] = condition.message or ""
  end
end
-- A stalled Stack may still say it is reconciling: the failure comes first.
if holds.Stalled ~= nil then
  return {status = "Degraded", message = holds.Stalled}
end
if holds.Reconciling ~= nil then
  return {status = "Progressing", message = holds.Reconciling}
end
if holds.Ready ~= nil then
  return {status = "Healthy", message = holds.Ready}
end
return {status = "Progressing", message = "waiting for the operator to reconcile the stack"}

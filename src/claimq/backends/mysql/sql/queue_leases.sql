SELECT name, lease_seconds FROM claimq_queues WHERE JSON_CONTAINS(%(names)s, JSON_QUOTE(name))

SELECT pg_notify('{schema}_jobs', name) FROM unnest(%(names)s::text[]) AS name

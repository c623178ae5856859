DELETE FROM {schema}.leases WHERE name = %(name)s AND holder = %(holder)s

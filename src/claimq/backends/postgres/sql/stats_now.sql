SELECT {now} AS now

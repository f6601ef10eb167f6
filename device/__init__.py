"""Everything that touches hardware or disk: cameras, triggers, the station loop, evidence."""

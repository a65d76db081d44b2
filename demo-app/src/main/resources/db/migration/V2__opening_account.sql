-- Account 1 of the story: 1000.00 in minor units.
INSERT INTO accounts (id, holder, balance) VALUES (1, 'Alice', 100000);

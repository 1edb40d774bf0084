-- Refused: PIVOT has no plan node.
SELECT * FROM (SELECT channel, qty FROM sales) PIVOT (SUM(qty) FOR channel IN ('web', 'store'))

-- Parenthesised DISTINCT column ordered by its bare name.
SELECT DISTINCT (s.channel) FROM sales s WHERE s.qty > 0 ORDER BY channel

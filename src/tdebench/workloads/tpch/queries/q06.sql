select
	sum(l_extendedprice * l_discount) as revenue
from
	lineitem
where
	l_shipdate >= {{date}}
	and l_shipdate < {{date_end}}
	and l_discount between {{discount_min}} and {{discount_max}}
	and l_quantity < {{quantity}}

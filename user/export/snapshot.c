#include <stdlib.h>
#include "snapshot.h"

void snapshot_release(struct snapshot *s)
{
	free((void *)s->containers);
	free((void *)s->writers);
	s->containers = NULL;
	s->writers = NULL;
}

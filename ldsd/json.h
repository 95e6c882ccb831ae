/* json.h - the one helper LDS's hand-written JSON output needs. */
#ifndef LDS_JSON_H
#define LDS_JSON_H

#include <stdio.h>

/* Writes s as a JSON string, quotes included, escaping '"', '\\' and
 * control characters, so that text from a config file or a peer cannot
 * break the document. */
void json_str(FILE *out, const char *s);

#endif

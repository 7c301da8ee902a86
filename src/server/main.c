/* streampulse: the broker (serve) and the client sub-commands, in one binary. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    fprintf(stderr, "streampulse: not yet\n");
    return 2;
}
